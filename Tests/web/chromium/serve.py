# Serves the worktree on 127.0.0.1 (port 0) and waits for the probe page to POST its results to /result.
import http.server, json, sys, threading, os
root = sys.argv[1]
result = {}
done = threading.Event()
class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k): super().__init__(*a, directory=root, **k)
    def log_message(self, *a): pass
    def end_headers(self):
        self.send_header('Cache-Control', 'no-store'); super().end_headers()
    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length']))
        result['body'] = body.decode()
        self.send_response(204); self.end_headers(); done.set()
http.server.SimpleHTTPRequestHandler.extensions_map['.js'] = 'text/javascript'
http.server.SimpleHTTPRequestHandler.extensions_map['.mjs'] = 'text/javascript'
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
ok = done.wait(float(sys.argv[2]) if len(sys.argv) > 2 else 90)
print(result.get('body', 'TIMEOUT'), flush=True)
