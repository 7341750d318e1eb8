"""Build side, the compile's frame (the driver floor): one compile's plan, stages and outputs, over the
device (offload.device) and host (offload.host) steps."""
