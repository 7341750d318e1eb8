"""The cache's storage, below the device and the driver floors: where it lives (root.py), the local folder
(folder.py), the remote tier (remote.py), the envelope of an entry (sealed.py), whole compiles taken
from it (compiles.py) and what the installed tools said of themselves (facts.py). The device image
cache's own entries are offload/device/image_cache.py's."""
