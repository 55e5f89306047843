"""Run mini-swe-agent 2.4.6 on one task, the way its `mini` command does, without the interactive prompts.

Its own text-based config (mini_textbased.yaml: one ```mswea_bash_command block per reply, the model's tools in
the prompt, as lsp-agent's prompt mode) with its DefaultAgent (what `mini --yolo --exit-immediately` amounts to)
and LocalEnvironment in the task copy. Run as a script by agents.py, in the interpreter that has mini-swe-agent
(`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Build mini-swe-agent's model, environment and agent from its config plus the limits, and run the task."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True)
    parser.add_argument("--cwd", type=Path, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--step-limit", type=int, required=True)
    parser.add_argument("--time-limit", type=int, required=True)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        from minisweagent.agents.default import DefaultAgent
        from minisweagent.config import get_config_from_spec
        from minisweagent.environments.local import LocalEnvironment
        from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel
    except ImportError as exc:
        print(
            f"error: mini-swe-agent is not installed ({exc}); run: pip install -e '.[bench]'", file=sys.stderr
        )
        return 2
    config = get_config_from_spec("mini_textbased.yaml")
    model_config = dict(config.get("model", {}))
    model_kwargs = dict(model_config.pop("model_kwargs", {}))
    model_kwargs.update(api_base=args.api_base, api_key=args.api_key)
    model = LitellmTextbasedModel(model_name=args.model, model_kwargs=model_kwargs, **model_config)
    env = LocalEnvironment(cwd=str(args.cwd), **config.get("environment", {}))
    agent_config = {k: v for k, v in config.get("agent", {}).items() if k not in ("mode", "confirm_exit")}
    agent_config.update(
        step_limit=args.step_limit,
        wall_time_limit_seconds=args.time_limit,
        cost_limit=0,
        output_path=args.output,
    )
    agent = DefaultAgent(model, env, **agent_config)
    result = agent.run(args.task)
    print(f"exit_status: {result.get('exit_status')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
