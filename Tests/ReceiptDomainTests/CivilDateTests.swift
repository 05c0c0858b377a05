import Foundation
import Testing

@testable import ReceiptDomain

@Suite struct CivilDateTests {
    @Test func knownInstants() {
        #expect(CivilDate.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(CivilDate.rfc3339(Date(timeIntervalSince1970: 1_717_200_000)) == "2024-06-01T00:00:00Z")
        #expect(CivilDate.rfc3339(Date(timeIntervalSince1970: 1_709_164_800)) == "2024-02-29T00:00:00Z")
        #expect(CivilDate.rfc3339(Date(timeIntervalSince1970: 1_717_200_000.123)) == "2024-06-01T00:00:00.123Z")
        #expect(CivilDate.rfc3339(Date(timeIntervalSince1970: 1_717_200_000.5)) == "2024-06-01T00:00:00.500Z")
        #expect(CivilDate.rfc3339(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(CivilDate.rfc3339(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
    }

    @Test func agreesWithFoundationOnRandomInstants() {
        var rng = SplitMix64(seed: 7)
        let formatter = ISO8601DateFormatter()
        for _ in 0..<2000 {
            let seconds = Int64.random(in: -2_000_000_000...4_000_000_000, using: &rng)
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(CivilDate.rfc3339(date) == formatter.string(from: date))
        }
    }
}
