/// A horizontal (optionally stacked) bar chart rendered as inline SVG text, so report.html needs no
/// scripts or external assets. Every label is HTML-escaped.
struct SVGBarChart {
    /// One stacked segment kind (e.g. an outcome) and its fill colour.
    struct Series {
        var name: String
        var color: String
    }

    /// One bar: a label and one value per series.
    struct Row {
        var label: String
        var values: [Int]
    }

    /// The `id` attribute of the `<svg>` element (scripts/check-reports looks for it).
    var id: String
    var title: String
    var series: [Series]
    var rows: [Row]

    private let width = 760
    private let labelWidth = 210
    private let valueWidth = 70
    private let rowHeight = 26
    private let legendHeight = 30

    init(id: String, title: String, series: [Series], rows: [Row]) {
        self.id = id
        self.title = title
        self.series = series
        self.rows = rows
    }

    /// A single-series chart: one bar per (label, value).
    init(id: String, title: String, color: String, bars: [(String, Int)]) {
        self.init(
            id: id,
            title: title,
            series: [Series(name: title, color: color)],
            rows: bars.map { Row(label: $0.0, values: [$0.1]) }
        )
    }

    func render() -> String {
        let showLegend = series.count > 1
        // Legend entries flow left to right and wrap to a new line at the chart's right edge.
        var legend: [(x: Int, line: Int, entry: Series)] = []
        var legendX = labelWidth
        var legendLine = 0
        for entry in series {
            let entryWidth = 24 + entry.name.count * 7
            if legendX + entryWidth > width, legendX > labelWidth {
                legendLine += 1
                legendX = labelWidth
            }
            legend.append((legendX, legendLine, entry))
            legendX += entryWidth
        }
        let top = showLegend ? legendHeight + legendLine * 18 : 6
        let height = top + max(rows.count, 1) * rowHeight + 8
        let barArea = width - labelWidth - valueWidth
        let maximum = max(1, rows.map { $0.values.reduce(0, +) }.max() ?? 0)
        var svg = """
            <svg id="\(HTMLText.escape(id))" class="chart" xmlns="http://www.w3.org/2000/svg" \
            viewBox="0 0 \(width) \(height)" width="\(width)" height="\(height)" role="img" \
            aria-label="\(HTMLText.escape(title))">
            <title>\(HTMLText.escape(title))</title>

            """
        if showLegend {
            for (x, line, entry) in legend {
                let name = HTMLText.escape(entry.name)
                let y = 8 + line * 18
                svg += "<rect x=\"\(x)\" y=\"\(y)\" width=\"12\" height=\"12\" fill=\"\(entry.color)\"/>"
                svg += "<text x=\"\(x + 16)\" y=\"\(y + 10)\" class=\"legend\">\(name)</text>\n"
            }
        }
        if rows.isEmpty {
            svg += "<text x=\"\(labelWidth)\" y=\"\(top + 17)\" class=\"empty\">no data in this run</text>\n"
        }
        for (index, row) in rows.enumerated() {
            let y = top + index * rowHeight
            let total = row.values.reduce(0, +)
            svg += "<text x=\"\(labelWidth - 8)\" y=\"\(y + 17)\" text-anchor=\"end\" class=\"label\">"
            svg += "\(HTMLText.escape(Self.truncate(row.label)))</text>\n"
            var x = Double(labelWidth)
            for (value, entry) in zip(row.values, series) where value > 0 {
                let segment = Double(value) / Double(maximum) * Double(barArea)
                svg += "<rect x=\"\(Self.format(x))\" y=\"\(y + 4)\" width=\"\(Self.format(max(segment, 1)))\" "
                svg += "height=\"\(rowHeight - 8)\" fill=\"\(entry.color)\">"
                svg += "<title>\(HTMLText.escape(row.label)): \(HTMLText.escape(entry.name)) \(value)</title></rect>\n"
                x += segment
            }
            svg += "<text x=\"\(Self.format(x + 6))\" y=\"\(y + 17)\" class=\"value\">\(total)</text>\n"
        }
        svg += "</svg>"
        return svg
    }

    private static func truncate(_ label: String) -> String {
        label.count > 30 ? String(label.prefix(29)) + "…" : label
    }

    private static func format(_ value: Double) -> String {
        String(Double(Int((value * 10).rounded())) / 10)
    }
}
