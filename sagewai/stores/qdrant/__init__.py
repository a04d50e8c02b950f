"""The Qdrant backends: Qdrant's embedded engine (qdrant-edge-py) and a Qdrant server or local mode
(qdrant-client). Import them from :mod:`sagewai.stores`.
"""
