"""How does this run get its Python? One entry point (`environment.prepare`); for a release: the index, the
install plan, what the metadata predicts, the built environment and its lock."""
