import Foundation
import Testing

@testable import Reconciler

@Suite struct ReportHTMLTests {
    let data = ReportSampleData.data()

    @Test func pageHasEveryChartAndNoScriptsOrExternalAssets() {
        let html = ReportHTML.render(data: data, summary: RunSummary(data: data))
        for id in ReportHTML.chartIds {
            #expect(html.contains("<svg id=\"\(id)\""), "missing chart \(id)")
        }
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("src=\""))
        #expect(!html.contains("<link"))
        #expect(html.contains("@media print"))
        #expect(!html.contains("DRY RUN"))
    }

    @Test func hostileValuesAreEscaped() {
        let html = ReportHTML.render(data: data, summary: RunSummary(data: data))
        #expect(!html.contains(ReportSampleData.htmlUserId))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("=HYPERLINK(&quot;http://x&quot;,&quot;y&quot;)"))
        #expect(html.contains("&#39; /C calc&#39;"))
    }

    @Test func hostileProductIdInChartIsEscaped() {
        var hostile = data
        hostile.items[0].productId = "\"><svg onload=alert(1)>"
        let html = ReportHTML.render(data: hostile, summary: RunSummary(data: hostile))
        #expect(!html.contains("<svg onload"))
        #expect(html.contains("&quot;&gt;&lt;svg onload=alert(1)&gt;"))
    }

    @Test func theNoAppColumnAndTheAppsTableShowOnlyWhenARowOfAnUnconfiguredAppWasMet() {
        let plain = ReportHTML.render(data: data, summary: RunSummary(data: data))
        #expect(!plain.contains("no_app"))
        #expect(!plain.contains("By app"))
        var mixed = data
        mixed.items[0].outcome = "no_app"
        mixed.items[0].bundleId = "com.example.unconfigured"
        mixed.items[0].attempts = 0
        let summary = RunSummary(data: mixed)
        #expect(summary.byApp?.first { $0.id == "com.example.unconfigured" }?.byOutcome["no_app"] == 1)
        let html = ReportHTML.render(data: mixed, summary: summary)
        #expect(html.contains("<th>no_app</th>") || html.contains(">no_app<"))
        #expect(html.contains("By app"))
        #expect(html.contains("com.example.unconfigured"))
    }

    @Test func dryRunAndIncompleteRunsCarryBanners() {
        let dry = ReportSampleData.data(dryRun: true, status: "partial", exitCode: 2)
        let html = ReportHTML.render(data: dry, summary: RunSummary(data: dry))
        #expect(html.contains("id=\"dry-run-banner\""))
        #expect(html.contains("DRY RUN"))
        #expect(html.contains("This run is <b>partial</b>"))
    }

    @Test func moneySectionNamesProductsWithoutPrice() {
        let html = ReportHTML.render(data: data, summary: RunSummary(data: data))
        #expect(html.contains("id=\"missing-prices\""))
        #expect(html.contains("<td>team.monthly</td><td>no row in the products catalog</td>"))
        // The headline's catalog net: 99.97 gross less the 9.99 refund.
        #expect(html.contains("89.98 USD"))
    }

    @Test func backwardsExpiryMovesHaveTheirOwnSection() throws {
        let html = ReportHTML.render(data: data, summary: RunSummary(data: data))
        let start = try #require(html.range(of: "<section id=\"expiry-moved-backwards\""))
        let section = String(html[start.lowerBound...]).components(separatedBy: "</section>")[0]
        #expect(section.contains("<h2>Expiry moved backwards (2)</h2>"))
        #expect(section.contains("<td>1000005</td><td>u5</td><td>2024-05-21T00:00:00Z → 2024-04-30T21:36:00Z</td>"))
        #expect(section.contains("<td>pro.monthly -&gt; pro.yearly</td>"))
        #expect(section.contains(HTMLText.escape(ReportSampleData.backwardsUpgradeReason)))
        #expect(!section.contains("1000001"))
        #expect(html.contains("<div class=\"num\">2</div><div class=\"lbl\">Expiry moved back</div>"))
        // The section comes before the full changes table.
        let changes = try #require(html.range(of: "<section id=\"changes\""))
        #expect(start.lowerBound < changes.lowerBound)
    }

    @Test func noBackwardsMovesSaysNone() {
        var quiet = data
        for index in quiet.items.indices { quiet.items[index].expiryMovedBackwards = false }
        let html = ReportHTML.render(data: quiet, summary: RunSummary(data: quiet))
        #expect(html.contains("<h2>Expiry moved backwards (0)</h2>"))
        #expect(html.contains("changes.csv lists them too, with expiry_moved_backwards = true.</p>\n<p>None.</p>"))
    }

    @Test func escapingCoversAllSpecialCharactersAndControls() {
        let page = ReportHTML.table(columns: ["a"], rows: [["<&>\"'\u{0}\u{1B}x"]], numericFrom: nil)
        #expect(page.contains("<td>&lt;&amp;&gt;&quot;&#39;\u{2400}\u{241B}x</td>"))
    }

    /// A right-to-left override would show `user-gpj.exe` as `user-exe.jpg`; an ESC would reach a terminal that
    /// prints the page's text: both are shown, not obeyed.
    @Test func bidirectionalOverridesAndEscapesAreShownNotObeyed() {
        let page = ReportHTML.table(
            columns: ["a"],
            rows: [["user-\u{202E}gpj.exe\u{2066}\u{1B}[31m\u{85}"]],
            numericFrom: nil
        )
        #expect(page.contains("<td>user-\u{FFFD}gpj.exe\u{FFFD}\u{241B}[31m\u{FFFD}</td>"))
        #expect(!page.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x1B || $0.value == 0x2066 })
    }
}
