"""offload.host"""
