"""Run `gpustack` with every listener on 127.0.0.1.

GPUStack 2.3.0 has no bind-host flag: with the gateway disabled its API server (uvicorn) and its tunnel proxy
(asyncio.start_server) listen on 0.0.0.0. Tests may only use loopback, so both bind calls are redirected
before gpustack's entry point runs. Usage: python loopback.py start --api-port ... (gpustack's own flags).
"""

import asyncio
import sys

import uvicorn

LOOPBACK = "127.0.0.1"
_config_init = uvicorn.Config.__init__
_start_server = asyncio.start_server


def _loopback_config(self, app, *args, **kwargs):
    kwargs["host"] = LOOPBACK
    _config_init(self, app, *args, **kwargs)


async def _loopback_server(callback, host=None, port=None, **kwargs):
    return await _start_server(callback, LOOPBACK, port, **kwargs)


uvicorn.Config.__init__ = _loopback_config
asyncio.start_server = _loopback_server

if __name__ == "__main__":
    from gpustack.main import main

    sys.argv[0] = "gpustack"
    sys.exit(main())
