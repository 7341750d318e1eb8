"""offload.annotations"""
