"""The environment variables that set the remote tier of the device image cache. Its own module because
root.py reads them before it knows whether remote.py is needed, and remote.py reads them too."""

REMOTE_URL_ENVIRONMENT = "MLIR_OFFLOAD_REMOTE_CACHE"  # the server; unset: the local folder only
REMOTE_MODE_ENVIRONMENT = "MLIR_OFFLOAD_REMOTE_CACHE_MODE"
REMOTE_TTL_ENVIRONMENT = "MLIR_OFFLOAD_REMOTE_CACHE_TTL"
