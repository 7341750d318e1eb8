"""Build side, the compile's frame (the driver floor): one compile's plan, stages and outputs, over the
device (offload.serialize) and host (offload.annotations) steps."""
