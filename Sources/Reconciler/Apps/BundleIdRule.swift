/// How the reconciler compares bundle ids (docs/operations.md, "Several apps"): ignoring ASCII case. Apple's
/// bundle ids are case-sensitive in theory, but App Store Connect keeps them unique ignoring case, so two ids
/// that differ only in case are one app: two entries of the apps file that do are a mistake, and a row's
/// `bundle_id` belongs to the app whose id it names in any case (with `--apps` or the one app's `--bundle-id`
/// / `APPLE_BUNDLE_ID`).
public enum BundleIdRule {
    /// The form two bundle ids are compared in: ASCII letters lowercased, everything else as it is.
    public static func key(_ bundleId: String) -> String {
        String(
            String.UnicodeScalarView(
                bundleId.unicodeScalars.map { scalar in
                    (65...90).contains(scalar.value) ? Unicode.Scalar(scalar.value + 32)! : scalar
                }
            )
        )
    }

    /// Whether `a` and `b` name the same app.
    public static func same(_ a: String, _ b: String) -> Bool { key(a) == key(b) }
}
