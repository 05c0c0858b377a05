import Foundation
import TestSupport

/// A webhook receiver written independently of the sender, in Python's standard library: it verifies each
/// request's Standard Webhooks signature (standardwebhooks.com) with its own copy of the secret and records what it
/// got. Its behaviour is read from `mode` before each request: `ok`, `503`, `400`, `flaky:N` (the first N requests
/// 503), `slow` (0.4 s, then 200), `slow:S` (S seconds, then 200). A request whose signature or timestamp does not verify is answered 401.
final class WebhookReceiver: Sendable {
    static let script = #"""
        import base64, hashlib, hmac, http.server, json, os, sys, time
        folder, secret = sys.argv[1], sys.argv[2]
        key = base64.b64decode(secret[len("whsec_"):])
        count = [0]

        def log(name, record):
            with open(os.path.join(folder, name), "a") as f:
                f.write(json.dumps(record) + "\n")

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                msg_id = self.headers.get("webhook-id", "")
                ts = self.headers.get("webhook-timestamp", "")
                sigs = self.headers.get("webhook-signature", "").split(" ")
                expected = "v1," + base64.b64encode(
                    hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()).decode()
                fresh = ts.isdigit() and abs(time.time() - int(ts)) < 300
                verified = fresh and any(hmac.compare_digest(s, expected) for s in sigs)
                count[0] += 1
                mode = open(os.path.join(folder, "mode")).read().strip()
                status = 200
                if not verified:
                    status = 401
                elif mode == "503" or (mode.startswith("flaky:") and count[0] <= int(mode[6:])):
                    status = 503
                elif mode == "400":
                    status = 400
                elif mode == "slow" or mode.startswith("slow:"):
                    time.sleep(float(mode[5:]) if mode.startswith("slow:") else 0.4)
                event = json.loads(body) if verified else {}
                data = event.get("data", {})
                record = {"id": msg_id, "status": status, "type": event.get("type"),
                          "event_id": data.get("event_id"), "subscription_id": data.get("subscription_id"),
                          "sequence": data.get("sequence"), "kind": data.get("kind"),
                          "run_id": data.get("run_id"),
                          "original_transaction_id": data.get("original_transaction_id")}
                log("attempts.jsonl", record)
                if status == 200:
                    log("received.jsonl", record)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        with open(os.path.join(folder, "port.tmp"), "w") as f:
            f.write(str(server.server_port))
        os.rename(os.path.join(folder, "port.tmp"), os.path.join(folder, "port"))
        server.serve_forever()
        """#

    let folder: URL
    let process: ChildProcess
    let port: Int

    var url: String { "http://127.0.0.1:\(port)/hooks" }

    init(secret: String, mode: String = "ok") async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.script.write(to: folder.appendingPathComponent("receiver.py"), atomically: true, encoding: .utf8)
        try mode.write(to: folder.appendingPathComponent("mode"), atomically: true, encoding: .utf8)
        process = try await ChildProcess(
            "/usr/bin/env",
            ["python3", folder.appendingPathComponent("receiver.py").path, folder.path, secret]
        )
        var found: Int?
        for _ in 0..<200 where found == nil {
            found = (try? String(contentsOf: folder.appendingPathComponent("port"), encoding: .utf8)).flatMap(Int.init)
            if found == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard let found else { throw FixtureError("the Python receiver did not start") }
        port = found
    }

    deinit {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(at: folder)
    }

    func set(mode: String) throws {
        try mode.write(to: folder.appendingPathComponent("mode"), atomically: true, encoding: .utf8)
    }

    /// The requests answered 200 (`received.jsonl`) or all of them (`attempts.jsonl`), in arrival order.
    func records(_ name: String = "received.jsonl") -> [[String: Any]] {
        let text = (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
