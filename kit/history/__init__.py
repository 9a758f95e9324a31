"""JAX's own git history: where it comes from and what the kit reads in it.

A bottom-layer package (it imports only :mod:`kit.errors`): the bisect asks it
for the commits between two releases, the install layer asks it for a
commit's files. Modules, one question each:

* :mod:`.source`: which clone (``--jax-repo``, ``[install] jax_repo``, or the
  kit's own partial clone under ``.nox/``), and fetching tags it lacks;
* :mod:`.commit_range`: the commits between two release tags as one ordered
  list (first-parent line; release branches; merges opened);
* :mod:`.version_file`: ``jax/version.py`` at a commit, the jaxlib builds it accepts;
* :mod:`.xla`: the XLA revision a commit pins, and the openxla/xla link;
* :mod:`.commits`: a commit's date, author, title, pull request and files;
  files changed in a range; a file's text at a tag;
* :mod:`.export`: a commit's files written into a folder (contents fetched in
  one request from a partial clone);
* :mod:`.git`: the one way git is run.
"""
