import Reconciler

extension AppDefinition {
    /// This app with every Apple URL that begins with `old` (a stopped simulator's `http://127.0.0.1:PORT`) moved
    /// to `new` (its successor's): verifyReceipt's production and sandbox URLs and the Server API's base URLs. A
    /// simulator restarted with another clock listens on a port of its own, never its predecessor's, which another
    /// process may have taken in between.
    public func movingSimulatorBase(from old: String, to new: String) -> AppDefinition {
        func moved(_ url: String) -> String {
            guard url.hasPrefix(old) else { return url }
            let path = url.dropFirst(old.count)
            return path.isEmpty || path.hasPrefix("/") ? new + path : url
        }
        func moved(_ settings: ServerAPISettings) -> ServerAPISettings {
            var settings = settings
            settings.endpoints.production = moved(settings.endpoints.production)
            settings.endpoints.sandbox = moved(settings.endpoints.sandbox)
            return settings
        }
        var app = self
        switch credentials {
        case .verifyReceipt(var apple, let notifications):
            apple.productionURL = moved(apple.productionURL)
            apple.sandboxURL = moved(apple.sandboxURL)
            app.credentials = .verifyReceipt(apple, notifications: notifications.map(moved))
        case .serverAPI(let settings):
            app.credentials = .serverAPI(moved(settings))
        }
        return app
    }
}
