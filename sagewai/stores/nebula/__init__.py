"""The NebulaGraph backend (nebula3-python) and its nGQL statement builder. Import it from
:mod:`sagewai.stores`.
"""
