"""offload.build.host"""
