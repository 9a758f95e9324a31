"""How does release X get onto this machine? The index, the install plan, the environment and its lock."""
