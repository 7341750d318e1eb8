"""offload.packager"""
