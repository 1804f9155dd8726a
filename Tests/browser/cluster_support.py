#!/usr/bin/env python3
"""Several Parlor nodes behind nginx for the browser tests (PARLOR_BROWSER_CLUSTER=1, issue 41): a private
PostgreSQL (Debian's initdb/pg_ctl in a temporary directory, as `postgres` when root), NODES `parlor serve` processes
sharing it, each with its own HTTP and media ports and a media link socket (--cluster-media-address), and nginx as a
WebSocket-aware balancer in front of them (least connections, as docker/nginx/parlor-scale.conf). A Cluster stands
in for a Server: its url is nginx's, stop() stops everything it started, by PID. Not a test by itself.
"""
import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

from browser_support import Server, check, wait_for

CLUSTER = os.environ.get("PARLOR_BROWSER_CLUSTER") == "1"
NGINX = next((p for p in ("/usr/sbin/nginx", "/usr/bin/nginx") if os.access(p, os.X_OK)), None)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_accepting(port, process, what, timeout=10):
    """Waits until something accepts TCP connections on 127.0.0.1:port (nginx has no other sign of readiness)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (process is None or process.poll() is None):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} does not accept connections on port {port}")


class Postgres:
    """A private PostgreSQL on a free loopback port, its files in a fresh directory; database `parlor`, user
    `parlor` (trust). PostgreSQL refuses to run as root: as root its tools run as `postgres`, which run.sh lets
    reach the directory."""

    def __init__(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
        if not bins:
            raise RuntimeError("no PostgreSQL under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
        self.bin = os.path.dirname(bins[-1])
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        self.directory = tempfile.mkdtemp(prefix="parlor-pg-")
        self.data = os.path.join(self.directory, "data")
        self.started = False
        if os.getuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
        self.run("initdb", "-D", self.data, "-A", "trust", "-U", "parlor", "-E", "UTF8", "--locale=C", "--no-sync")
        self.port = free_port()
        # A test database: durability off, as Tests/PostgresTestCluster has it.
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        self.run("pg_ctl", "-D", self.data, "-o", options, "-l", os.path.join(self.directory, "log"), "-w", "start")
        self.started = True
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "parlor", "parlor")
        self.url = f"postgres://parlor@127.0.0.1:{self.port}/parlor"

    def run(self, tool, *arguments):
        done = subprocess.run([*self.as_user, os.path.join(self.bin, tool), *arguments],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stdout}{done.stderr}")
        return done.stdout

    def query(self, sql):
        """Rows of a query, as lists of strings (psql's unaligned output)."""
        out = self.run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "parlor", "-d", "parlor",
                       "-X", "-A", "-t", "-F", "\t", "-c", sql)
        return [line.split("\t") for line in out.splitlines() if line]

    def stop(self):
        if self.started:
            try:
                self.run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
            except Exception:
                # The postmaster by its PID (the first line of its PID file), since pg_ctl could not.
                try:
                    with open(os.path.join(self.data, "postmaster.pid")) as f:
                        os.kill(int(f.readline()), 9)
                except (OSError, ValueError):
                    pass
            self.started = False
        shutil.rmtree(self.directory, ignore_errors=True)


class Nginx:
    """nginx on a free loopback port balancing HTTP and WebSockets over `upstreams` (ports on 127.0.0.1), with the
    directives of docker/nginx/parlor-scale.conf; its files in a fresh directory."""

    def __init__(self, upstreams):
        if not NGINX:
            raise RuntimeError("nginx is missing: apt-get install nginx-light")
        self.directory = tempfile.mkdtemp(prefix="parlor-nginx-")
        self.port = free_port()
        servers = "\n        ".join(f"server 127.0.0.1:{port} max_fails=1 fail_timeout=10s;" for port in upstreams)
        temp = "\n    ".join(f"{kind}_temp_path {self.directory}/{kind};"
                             for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        configuration = f"""daemon off;
master_process off;
worker_processes 1;
pid {self.directory}/nginx.pid;
error_log {self.directory}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    {temp}
    upstream parlor {{
        # Each page's WebSocket stays open, so the next one goes to the node with fewer: the pages alternate.
        least_conn;
        {servers}
    }}
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    server {{
        listen 127.0.0.1:{self.port};
        location / {{
            proxy_pass http://parlor;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host $http_host;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            proxy_next_upstream error timeout;
        }}
    }}
}}
"""
        with open(os.path.join(self.directory, "nginx.conf"), "w") as f:
            f.write(configuration)
        self.process = subprocess.Popen(
            [NGINX, "-p", self.directory, "-c", os.path.join(self.directory, "nginx.conf"),
             "-e", os.path.join(self.directory, "error.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_accepting(self.port, self.process, "nginx")
        except RuntimeError as error:
            log = self.log_tail()
            self.stop()
            raise RuntimeError(f"{error}; its log: {log}")
        self.url = f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines=20):
        try:
            with open(os.path.join(self.directory, "error.log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def stop(self):
        # SIGKILL, by PID: with WebSockets still open through it, nginx's own shutdown may wait on them.
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        shutil.rmtree(self.directory, ignore_errors=True)


class Cluster:
    """`nodes` Parlor nodes on one PostgreSQL behind nginx; url is nginx's. Each node listens on its own HTTP and
    media ports (127.0.0.1, port 0), answers its own connections' media:offer, and links media with the others over
    --cluster-media-address 127.0.0.1:0. An admin token opens each node's /metrics to the checks."""

    def __init__(self, *extra, nodes=2):
        self.postgres = self.nginx = None
        self.nodes = []
        self.data_directories = []
        self.admin_token = secrets.token_hex(16)
        try:
            self.postgres = Postgres()
            for _ in range(nodes):
                data = tempfile.mkdtemp(prefix="parlor-node-")
                self.data_directories.append(data)
                self.nodes.append(Server(
                    "--data-dir", data, "--cluster-media-address", "127.0.0.1:0", "--admin-token", self.admin_token,
                    "--trusted-proxies", "127.0.0.1/32", *extra, database=self.postgres.url))
            self.nginx = Nginx([int(node.url.rsplit(":", 1)[1]) for node in self.nodes])
        except Exception:
            self.stop()
            raise
        self.url = self.nginx.url
        print(f"--- cluster: nginx at {self.url} balancing {', '.join(n.url for n in self.nodes)} "
              f"(PIDs {', '.join(str(n.process.pid) for n in self.nodes)}), PostgreSQL on port {self.postgres.port}",
              flush=True)

    def stop(self):
        # SIGTERM to all first, so their graceful stops overlap (a second SIGTERM would cut a node's stop short).
        for node in self.nodes:
            if node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            try:
                node.process.wait(10)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait(5)
        if self.nginx:
            self.nginx.stop()
        if self.postgres:
            self.postgres.stop()
        for data in self.data_directories:
            shutil.rmtree(data, ignore_errors=True)

    def log_tail(self, lines=40):
        tails = [f"--- node {n.url} ---\n{n.log_tail(lines)}" for n in self.nodes]
        if self.nginx:
            tails.append(f"--- nginx ---\n{self.nginx.log_tail()}")
        return "\n".join(tails)

    def metrics(self, node):
        """A node's /metrics as {series: value}, a series being the name and its labels as written."""
        request = urllib.request.Request(node.url + "/metrics", headers={"Authorization": f"Bearer {self.admin_token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
        series = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                series[name] = float(value)
        return series

    def node_of_members(self):
        """{member id: the URL of the node holding it} for the JOINED members, from the shared database."""
        rows = self.postgres.query("SELECT m.id, n.http_url FROM members m JOIN nodes n ON n.id = m.node_id "
                                   "WHERE m.state = 'JOINED'")
        return {member: url for member, url in rows}

    def check_audio_crossed(self, prefix, speaker, heard):
        """Checks that the pages landed on every node and that a speaker's audio crossed a media link: `speaker` is
        (name, member id), `heard` a list of (name, member id, whether audio_flows passed) for the listeners."""
        node_of = self.node_of_members()
        urls = [node.url for node in self.nodes]
        where = ", ".join(f"{name} on node {urls.index(node_of[m]) + 1 if node_of.get(m) in urls else '?'}"
                          for name, m in [speaker] + [(n, m) for n, m, _ in heard])
        check(f"{prefix}: nginx spread the pages over the {len(urls)} nodes",
              set(urls) <= set(node_of.values()), where)
        speaker_node = node_of.get(speaker[1])
        across = [(name, node_of[m]) for name, m, ok in heard if ok and node_of.get(m) not in (None, speaker_node)]
        check(f"{prefix}: a listener on another node than {speaker[0]} hears {speaker[0]}", across, where)
        metrics = {}
        for node in self.nodes:
            try:
                metrics[node.url] = self.metrics(node)
            except Exception as error:
                check(f"{prefix}: node {node.url}'s /metrics", False, str(error))
                return
        for index, url in enumerate(urls, 1):
            m = metrics[url]
            websockets = m.get('parlor_connections{kind="websocket"}', 0)
            sessions = m.get("parlor_media_sessions", 0)
            check(f"{prefix}: node {index} holds WebSocket connections and media sessions",
                  websockets > 0 and sessions > 0, f"{websockets:.0f} WebSockets, {sessions:.0f} media sessions")
        sent = metrics.get(speaker_node, {}).get("parlor_media_link_packets_sent_total", 0)
        check(f"{prefix}: {speaker[0]}'s node sends media link packets", sent > 0, f"{sent:.0f} sent")
        for name, url in across:
            # Poll briefly: the counter is read while packets flow, and the check above already heard them.
            received = wait_for(f"link packets received on {name}'s node", lambda: self.metrics_value(
                url, "parlor_media_link_packets_received_total"), timeout=5) or 0
            check(f"{prefix}: {name}'s node receives {speaker[0]}'s packets over the media link", received > 0,
                  f"parlor_media_link_packets_received_total {received:.0f}")

    def metrics_value(self, url, series):
        node = next(n for n in self.nodes if n.url == url)
        return self.metrics(node).get(series, 0)
