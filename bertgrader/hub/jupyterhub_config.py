"""JupyterHub's configuration for the course server; `python -m bertgrader.hub start` runs `jupyterhub -f` on this
file with BERT_HUB_SETTINGS naming the settings it wrote (settings.json in the server's state folder)."""
import json
import os
from pathlib import Path

c = get_config()  # noqa: F821 (provided by JupyterHub when it loads this file)
s = json.loads(Path(os.environ["BERT_HUB_SETTINGS"]).read_text(encoding="utf-8"))
venv, state = Path(s["venv"]), Path(s["state"])

# One machine, one address: the proxy on 127.0.0.1 (put a TLS reverse proxy in front to serve a class over a
# network); the hub's own API on the next port.
c.JupyterHub.bind_url = f"http://127.0.0.1:{s['port']}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = s["port"] + 1
c.ConfigurableHTTPProxy.command = [s["proxy"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{s['port'] + 2}"
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")
c.JupyterHub.cleanup_servers = True  # Ctrl-C stops every person's JupyterLab too
c.JupyterHub.cleanup_proxy = True

# Local accounts, checked by PAM (each person's system password). Only the class may log in; nobody is a hub admin
# (an admin could open any student's server).
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False  # no login session (utmp, pam_systemd): not needed to run a server
c.Authenticator.allowed_users = set(s["students"]) | {s["instructor"]}
c.Authenticator.admin_users = set()

# Each person's JupyterLab runs as that person, from the course's environment (or its view, environment.py), so
# every kernel is the course's Python with bertlib, torch and nbgrader; it starts in their home.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(venv / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.environment = {
    "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "MPLBACKEND": "Agg",
}
# A loaded machine starts JupyterLab slowly; wait rather than fail the login.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
