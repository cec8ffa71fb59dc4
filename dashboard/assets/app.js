// Draws every chart of the page with uPlot. A chart is an element with a
// data-chart attribute holding the JSON of dashboard.Chart: x values, the
// series over them, bars or lines, time or category axis. Once drawn, the
// element gets data-drawn with the number of points shown.
(function () {
	"use strict";

	var palette = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#4d7c0f"];
	var height = 260;

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
			var labels = spec.labels || [];
			xAxis.splits = function () { return xs; };
			xAxis.values = function (u, splits) { return splits.map(function (i) { return labels[i] == null ? "" : labels[i]; }); };
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
