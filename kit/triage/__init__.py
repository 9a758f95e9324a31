"""From a bug report's text to a check, the releases it reproduces on, and the bisect to run (docs/triage.md)."""
