"""In-memory backends of every role: the reference semantics, for tests and short-lived agents.
Each is a real implementation (not a mock) that the conformance suites hold every other backend
to. Import them from :mod:`sagewai.stores`.
"""
