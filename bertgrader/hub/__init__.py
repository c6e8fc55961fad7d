"""A course server: JupyterHub on one machine, with local accounts for a class, nbgrader's exchange, JupyterLab with
nbgrader's Assignments pane for students and Formgrader for the instructor, every kernel the course's environment.

    python -m bertgrader.hub start --students alice,bob,carol --instructor teacher    # as root; Ctrl-C stops it
    python -m bertgrader.hub remove --state /srv/bert-course-hub                      # delete what start made

preflight.py  what must be there, checked before any work (root, bwrap, the proxy, a free port, the names)
accounts.py   the class's local accounts (useradd, passwords for PAM) and each one's Jupyter settings
course.py     the instructor's course folder (a copy of the course, private) and nbgrader's shared exchange
server.py     runs JupyterHub (jupyterhub_config.py reads the settings start wrote) until Ctrl-C
docs/course-server.md says how it works, what each person does, and what each step cost on this machine.
"""
