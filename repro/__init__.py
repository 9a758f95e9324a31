"""Repro scripts that run inside one JAX release's environment.

Everything here imports only the standard library, jax, numpy and scipy, and
must work on every JAX release from 0.4.13 to the newest and on Python 3.9+.
"""
