import Testing

@testable import ReceiptDomain

/// The members of a parsed JSON object: order, repeated keys, equality (a dictionary's semantics kept by a list).
@Suite struct JSONObjectTests {
    func object(_ text: String) throws -> JSONObject {
        guard case .object(let members) = try JSONParser.parse(bytes: Array(text.utf8)) else {
            Issue.record("not an object: \(text)")
            return JSONObject()
        }
        return members
    }

    @Test func aRepeatedKeyKeepsItsLastValueAndIsListedOnce() throws {
        let members = try object(#"{"status": 21002, "environment": "Sandbox", "status": 0}"#)
        #expect(members["status"] == .number("0"))
        #expect(members.keys == ["status", "environment"])
        #expect(members.count == 2)
        #expect(members.dictionary == ["status": .number("0"), "environment": .string("Sandbox")])
        // The typed layer reads the same value.
        #expect(try VerifyReceiptResponse.parse(Array(#"{"status": 21002, "status": 0}"#.utf8)).status == 0)
    }

    @Test func absentKeysAndEmptyObjects() throws {
        let empty = try object("{}")
        #expect(empty.isEmpty)
        #expect(empty["status"] == nil)
        #expect(try object(#"{"a": null}"#)["a"] == .null)
        #expect(try object(#"{"a": 1}"#)["b"] == nil)
    }

    @Test func equalityIgnoresOrderAndRepeatsLikeADictionary() throws {
        #expect(try object(#"{"a": 1, "b": [true]}"#) == object(#"{"b": [true], "a": 1}"#))
        #expect(try object(#"{"a": 2, "a": 1}"#) == object(#"{"a": 1}"#))
        #expect(try object(#"{"a": 1}"#) != object(#"{"a": 2}"#))
        #expect(try object(#"{"a": 1}"#) != object(#"{"a": 1, "b": 1}"#))
    }

    @Test func settingReplacesTheLastValueOrAppendsAndNilRemoves() {
        var members: JSONObject = ["a": .number("1"), "b": .string("x")]
        members["a"] = .bool(true)
        members["c"] = .null
        #expect(members.keys == ["a", "b", "c"])
        #expect(members["a"] == .bool(true))
        members["b"] = nil
        #expect(members.keys == ["a", "c"])
        #expect(members["b"] == nil)
    }
}
