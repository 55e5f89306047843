"""Build hook for the optional C accelerator of the index tokenizer; everything else is in pyproject.toml."""

from setuptools import Extension, setup

# optional=True: without a compiler the build goes on and tokens.py uses its pure-Python functions.
setup(
    ext_modules=[
        Extension(
            "lsp_agent.index._fastterms",
            ["lsp_agent/index/_fastterms.c", "lsp_agent/index/_ft_words.c"],
            depends=["lsp_agent/index/_ft_words.h", "lsp_agent/index/_ft_mem.h"],
            optional=True,
        ),
    ]
)
