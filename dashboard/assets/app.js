// Draws every chart of the page with uPlot. A chart is an element with a
// data-chart attribute holding the JSON of dashboard.Chart: x values, the
// series over them, bars or lines, time or category axis. Once drawn, the
// element gets data-drawn with the number of points shown.
(function () {
	"use strict";

	var palette = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#4d7c0f"];
	var height = 260;

	// The names under a category chart (rounds, sources, bins) are drawn
	// in this font; labelHeight is its line height in pixels.
	var labelFont = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
	var labelHeight = 14;
	var measurer = null;

	function textWidth(text) {
		if (!measurer) {
			measurer = document.createElement("canvas").getContext("2d");
			measurer.font = labelFont;
		}
		return measurer.measureText(text).width;
	}

	// categoryAxis sets up the x axis of a chart whose positions 0..n-1 are
	// named by labels. The names are written level while neighbours keep a
	// few pixels apart; otherwise all are turned 45 degrees (90 when the
	// first would reach out of the chart on the left), and when even turned
	// names would touch, only every k-th one is written, the last (the
	// newest round) always. uPlot calls these functions at every layout,
	// so a resized chart lays its names out again.
	function categoryAxis(axis, xs, labels, fallbackWidth) {
		var widths = xs.map(function (x) { return textWidth(labels[x] == null ? "" : String(labels[x])); });
		var widest = Math.max.apply(null, widths.concat([0]));
		// The widest pair of neighbours: level names need half of each.
		var pair = 0;
		for (var i = 1; i < widths.length; i++) {
			pair = Math.max(pair, (widths[i - 1] + widths[i]) / 2);
		}
		var last = widths.length ? widths[widths.length - 1] : 0;
		var slope = Math.SQRT1_2; // sine and cosine of 45 degrees
		function layout(u) {
			var r = uPlot.pxRatio;
			var width = u.bbox.width / r || fallbackWidth();
			var left = u.bbox.width ? u.bbox.left / r : 50;
			// Pixels from one position to the next: the x range spans n
			// steps (half a step of room on each side).
			var slot = width / Math.max(xs.length, 1);
			if (pair + 4 <= slot && last <= slot) {
				return { rotate: 0, every: 1 };
			}
			// A name turned 45 degrees ends at its position and reaches
			// (w + h/2)·cos 45° to the left of it; names turned 45 degrees
			// are slot·sin 45° apart across their lines, turned 90 a slot.
			var angle = (widest + labelHeight / 2) * slope <= left + slot / 2 ? 45 : 90;
			var apart = angle === 45 ? slot * slope : slot;
			return { rotate: angle, every: Math.max(1, Math.ceil((labelHeight + 2) / apart)) };
		}
		// named keeps the positions whose names are written; the grid
		// and the ticks mark only those, so a thinned axis stays calm.
		function named(u, splits) {
			var every = layout(u).every;
			var end = splits.length - 1;
			return splits.map(function (x, i) { return (end - i) % every === 0 ? x : null; });
		}
		axis.font = labelFont;
		axis.splits = function () { return xs; };
		axis.rotate = function (u) { return layout(u).rotate; };
		axis.values = function (u, splits) {
			return named(u, splits).map(function (x) { return x == null ? null : (labels[x] == null ? "" : String(labels[x])); });
		};
		axis.grid = { filter: named };
		axis.ticks = { filter: named };
		axis.size = function (u) {
			var angle = layout(u).rotate;
			if (!angle) {
				return 50;
			}
			// Ticks (10), the gap (5), the turned names' height, a margin.
			var tall = angle === 45 ? (widest + labelHeight) * slope : widest;
			return Math.ceil(10 + 5 + tall + 6);
		};
	}

	function fmt(v, percent) {
		if (v == null) {
			return "—";
		}
		if (percent) {
			return (v * 100).toFixed(v > 0 && v < 0.1 ? 1 : 0) + "%";
		}
		if (Math.abs(v) >= 1000) {
			return Math.round(v).toLocaleString("en");
		}
		return String(Math.round(v * 100) / 100);
	}

	function draw(el) {
		var spec;
		try {
			spec = JSON.parse(el.getAttribute("data-chart"));
		} catch (e) {
			el.textContent = "The chart's data could not be read.";
			return;
		}
		var bars = spec.kind === "bars";
		// A small chart (in an overview card) says its height.
		var small = el.hasAttribute("data-height");
		var h = parseInt(el.getAttribute("data-height"), 10) || height;
		var minWidth = small ? 160 : 320;
		var xs = spec.x || [];
		var points = 0;
		var data = [xs];
		var series = [{ label: spec.time ? "time (UTC)" : (spec.xlabel || "") }];
		(spec.series || []).forEach(function (s, i) {
			var color = palette[i % palette.length];
			var values = s.values || [];
			values.forEach(function (v) { if (v != null) { points++; } });
			data.push(values);
			var opt = {
				label: s.label,
				stroke: color,
				width: 2,
				value: function (u, v) { return fmt(v, spec.percent); },
			};
			if (bars) {
				opt.fill = color + "aa";
				opt.paths = uPlot.paths.bars({ size: [0.7, 80] });
				opt.points = { show: false };
			} else {
				opt.points = { show: true, size: 7 };
			}
			series.push(opt);
		});
		// Half a step of room on each side keeps the first and last bars
		// whole.
		var step = xs.length > 1 ? (xs[xs.length - 1] - xs[0]) / (xs.length - 1) : (spec.time ? 600 : 1);
		var xAxis = { stroke: "#555", space: spec.time ? 110 : 40 };
		if (!spec.time) {
			categoryAxis(xAxis, xs, spec.labels || [], function () { return Math.max(el.clientWidth, minWidth) - 60; });
		}
		var opts = {
			// Times on the pages are UTC; the charts agree with them.
			tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); },
			width: Math.max(el.clientWidth, minWidth),
			// A small chart has no room for a legend; its title says what
			// it draws.
			legend: { show: !small },
			height: h,
			series: series,
			scales: {
				x: {
					time: !!spec.time,
					// uPlot widens a single x value to a whole range of its
					// own; center the one point (or bar) instead.
					range: function (u, min, max) {
						if (xs.length === 1) {
							return [xs[0] - step / 2, xs[0] + step / 2];
						}
						return [min - step / 2, max + step / 2];
					},
				},
				y: {
					range: function (u, min, max) {
						if (spec.percent) {
							return [0, 1];
						}
						return [Math.min(0, min || 0), max > 0 ? max * 1.1 : 1];
					},
				},
			},
			axes: [xAxis, { stroke: "#555", values: function (u, vals) { return vals.map(function (v) { return fmt(v, spec.percent); }); } }],
			hooks: {
				draw: [function () { el.setAttribute("data-drawn", String(points)); }],
			},
		};
		if (!spec.time) {
			opts.series[0].value = function (u, v) { var l = spec.labels || []; return v == null ? "—" : (l[v] == null ? "" : l[v]); };
		}
		var plot = new uPlot(opts, data, el);
		// The browser tests read the drawn layout (axis names and their
		// places) from the plot.
		el.uplot = plot;
		window.addEventListener("resize", function () {
			plot.setSize({ width: Math.max(el.clientWidth, minWidth), height: h });
		});
	}

	function start() {
		if (typeof uPlot === "undefined") {
			document.querySelectorAll("[data-chart]").forEach(function (el) {
				el.textContent = "The chart library did not load.";
			});
			return;
		}
		document.querySelectorAll("[data-chart]").forEach(draw);
	}

	if (document.readyState === "loading") {
		document.addEventListener("DOMContentLoaded", start);
	} else {
		start();
	}
})();

// Copy buttons: a button with data-copy="SELECTOR" copies the text of the
// elements the selector finds, one per line, and says so in the element
// of data-copied.
(function () {
	"use strict";

	function copied(btn, text) {
		var out = btn.getAttribute("data-copied") && document.querySelector(btn.getAttribute("data-copied"));
		if (out) {
			out.textContent = text;
		}
	}

	// fallback copies through a selected text area, for browsers without
	// the clipboard API (or pages not served over HTTPS or localhost).
	function fallback(text) {
		var ta = document.createElement("textarea");
		ta.value = text;
		ta.setAttribute("readonly", "");
		ta.style.position = "absolute";
		ta.style.left = "-9999px";
		document.body.appendChild(ta);
		ta.select();
		var ok = false;
		try {
			ok = document.execCommand("copy");
		} catch (e) {
			ok = false;
		}
		document.body.removeChild(ta);
		return ok;
	}

	function start() {
		document.querySelectorAll("button[data-copy]").forEach(function (btn) {
			btn.addEventListener("click", function () {
				var names = [];
				document.querySelectorAll(btn.getAttribute("data-copy")).forEach(function (el) {
					names.push(el.textContent);
				});
				var text = names.join("\n") + "\n";
				var n = names.length + (names.length === 1 ? " name" : " names");
				btn.setAttribute("data-copy-text", text);
				if (navigator.clipboard && navigator.clipboard.writeText) {
					navigator.clipboard.writeText(text).then(function () {
						copied(btn, "Copied " + n + ".");
					}, function () {
						copied(btn, fallback(text) ? "Copied " + n + "." : "The browser refused to copy.");
					});
				} else {
					copied(btn, fallback(text) ? "Copied " + n + "." : "The browser refused to copy.");
				}
			});
		});
	}

	if (document.readyState === "loading") {
		document.addEventListener("DOMContentLoaded", start);
	} else {
		start();
	}
})();
