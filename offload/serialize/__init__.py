"""offload.serialize"""
