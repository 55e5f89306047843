"""Build hook for the optional C accelerator of the index tokenizer; everything else is in pyproject.toml."""

from setuptools import Extension, setup

# optional=True: without a compiler the build goes on and tokens.py uses its pure-Python functions.
setup(
    ext_modules=[
        Extension(
            "lsp_agent.index._fastterms",
            [f"lsp_agent/index/{name}.c" for name in ("_fastterms", "_ft_words", "_ft_blake2b")],
            depends=["lsp_agent/index/_ft_words.h", "lsp_agent/index/_ft_blake2b.h"],
            optional=True,
        ),
    ]
)
