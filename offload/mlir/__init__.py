"""The floor under the device and host steps: reading MLIR programs (frontend.py) and the helpers both
lowerings share over the MLIR bindings."""
