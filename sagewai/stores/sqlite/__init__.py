"""The embedded SQLite backends: metadata, graph and episodes, each a file in a project folder.
All three run on one plumbing module (:mod:`sagewai.stores.sqlite._database`): a worker thread
owning the connection, WAL pragmas, error translation and versioned migrations from SQL files.
Import them from :mod:`sagewai.stores`.
"""
