"""The OpenEnv server app of openenv.yaml: `uvicorn server.app:app` (configured by AGENTWORLD_* variables, see
agentworld_gym.integrations.openenv.app_from_environ), or `python -m server.app` / the `server` script."""

import os

from agentworld_gym.integrations.openenv import app_from_environ

app = app_from_environ()


def main() -> None:
    import uvicorn

    uvicorn.run(app, host=os.environ.get("HOST", "0.0.0.0"), port=int(os.environ.get("PORT", "8000")))


if __name__ == "__main__":
    main()
