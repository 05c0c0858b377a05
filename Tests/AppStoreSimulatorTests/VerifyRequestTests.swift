import Testing

@testable import AppStoreSimulator

@Suite struct VerifyRequestTests {
    @Test func readsFieldsInAnyOrderWithEscapedSlashes() throws {
        let body = Array(
            """
             { "exclude-old-transactions" : true ,
               "extra": {"nested": [1, 2.5e3, null, "x\\"y"]},
               "password":"s3cr\\u0065t",
               "receipt-data" : "ab\\/cd+=="
             }
            """.utf8
        )
        let r = try #require(VerifyRequest.parse(body))
        #expect(r.receiptData == Array("ab/cd+==".utf8))
        #expect(r.password == Array("s3cret".utf8))
        #expect(r.excludeOldTransactions)
    }

    @Test func excludeOldAcceptsStringsAndDefaultsToFalse() throws {
        let a = try #require(
            VerifyRequest.parse(Array(#"{"receipt-data":"x","exclude-old-transactions":"true"}"#.utf8))
        )
        #expect(a.excludeOldTransactions)
        let b = try #require(VerifyRequest.parse(Array(#"{"receipt-data":"x"}"#.utf8)))
        #expect(!b.excludeOldTransactions)
        #expect(b.password == nil)
    }

    @Test func rejectsWhatIsNotAJSONObject() {
        for text in ["", "[]", "receipt-data=abc", #"{"receipt-data":"x""#, #"{"a":tru}"#, #"{"a":1} trailing"#] {
            #expect(VerifyRequest.parse(Array(text.utf8)) == nil, "accepted \(text)")
        }
    }

    @Test func deepNestingIsRejectedNotACrash() {
        let deep = "{\"a\":" + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        #expect(VerifyRequest.parse(Array(deep.utf8)) == nil)
    }
}
