/// A line chart over days rendered as inline SVG text (no scripts, no external assets), for trends.html:
/// one polyline per series, a y axis from zero with three gridlines, the first, middle and last day on the x
/// axis. Every label is HTML-escaped.
struct SVGLineChart {
    struct Series {
        var name: String
        var color: String
        /// One value per x label (nil: no point that day).
        var values: [Double?]
    }

    /// The `id` attribute of the `<svg>` element (scripts/check-reports looks for it).
    var id: String
    var title: String
    /// The x axis labels (days), in order.
    var labels: [String]
    var series: [Series]
    /// How an axis value is written (counts, or an amount in a currency).
    var axisLabel: (Double) -> String

    private let width = 760
    private let height = 260
    private let left = 80
    private let right = 20
    private let top = 34
    private let bottom = 30

    func render() -> String {
        let plotWidth = Double(width - left - right)
        let plotHeight = Double(height - top - bottom)
        let maximum = max(series.flatMap { $0.values.compactMap { $0 } }.max() ?? 0, 1)
        var svg = """
            <svg id="\(HTMLText.escape(id))" class="chart" xmlns="http://www.w3.org/2000/svg" \
            viewBox="0 0 \(width) \(height)" width="\(width)" height="\(height)" role="img" \
            aria-label="\(HTMLText.escape(title))">
            <title>\(HTMLText.escape(title))</title>

            """
        var legendX = left
        for entry in series {
            svg += "<rect x=\"\(legendX)\" y=\"8\" width=\"12\" height=\"12\" fill=\"\(entry.color)\"/>"
            svg += "<text x=\"\(legendX + 16)\" y=\"18\" class=\"legend\">\(HTMLText.escape(entry.name))</text>\n"
            legendX += 24 + entry.name.count * 7
        }
        for step in 0...2 {
            let value = maximum * Double(step) / 2
            let y = Double(top) + plotHeight - plotHeight * Double(step) / 2
            svg += "<line x1=\"\(left)\" y1=\"\(Self.format(y))\" x2=\"\(width - right)\" y2=\"\(Self.format(y))\" "
            svg += "stroke=\"#d9dee5\"/>"
            svg += "<text x=\"\(left - 6)\" y=\"\(Self.format(y + 4))\" text-anchor=\"end\" class=\"value\">"
            svg += "\(HTMLText.escape(axisLabel(value)))</text>\n"
        }
        if labels.isEmpty || series.isEmpty {
            svg += "<text x=\"\(left + 10)\" y=\"\(top + 40)\" class=\"empty\">no snapshots</text>\n</svg>"
            return svg
        }
        func x(_ index: Int) -> Double {
            labels.count == 1
                ? Double(left) + plotWidth / 2 : Double(left) + plotWidth * Double(index) / Double(labels.count - 1)
        }
        func y(_ value: Double) -> Double { Double(top) + plotHeight - plotHeight * value / maximum }
        for index in Set([0, labels.count / 2, labels.count - 1]).sorted() {
            // The first and last day are anchored inside the chart so neither is cut off.
            let anchor =
                labels.count == 1 ? "middle" : index == 0 ? "start" : index == labels.count - 1 ? "end" : "middle"
            svg +=
                "<text x=\"\(Self.format(x(index)))\" y=\"\(height - 10)\" text-anchor=\"\(anchor)\" class=\"label\">"
            svg += "\(HTMLText.escape(labels[index]))</text>\n"
        }
        for entry in series {
            let points = entry.values.enumerated().compactMap { index, value in
                value.map { "\(Self.format(x(index))),\(Self.format(y($0)))" }
            }
            if points.count > 1 {
                svg += "<polyline fill=\"none\" stroke=\"\(entry.color)\" stroke-width=\"2\" "
                svg += "points=\"\(points.joined(separator: " "))\"/>\n"
            }
            for (index, value) in entry.values.enumerated() {
                guard let value else { continue }
                svg += "<circle cx=\"\(Self.format(x(index)))\" cy=\"\(Self.format(y(value)))\" r=\"2.5\" "
                svg += "fill=\"\(entry.color)\"><title>\(HTMLText.escape(labels[index])): "
                svg += "\(HTMLText.escape(entry.name)) \(HTMLText.escape(axisLabel(value)))</title></circle>\n"
            }
        }
        svg += "</svg>"
        return svg
    }

    private static func format(_ value: Double) -> String {
        String(Double(Int((value * 10).rounded())) / 10)
    }
}
