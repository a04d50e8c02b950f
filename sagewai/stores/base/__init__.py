"""The four store contracts (metadata, vector, graph, episodes) and their shared logic; import
them from :mod:`sagewai.stores`.
"""
