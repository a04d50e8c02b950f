"""The PostgreSQL backends: metadata (asyncpg), pgvector and episodes, on one pool module
(:mod:`sagewai.stores.postgres._pool`). Import them from :mod:`sagewai.stores`.
"""
