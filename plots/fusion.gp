# fusion.gp - what fusion bought: one bar per pair (or per group of pairs),
# the speedup of the fused variant over another variant of the same case
# (that variant's time / the fused time, log scale, 1 = no change), and
# beside it, lighter, the speedup the byte model predicts (that variant's
# bytes / the fused variant's). Reads the plain data file `fuseprof report`
# writes. Set these before `load`:
#   out         output stem: writes out.'.png' (and out.'.svg' when svg = 1)
#   width, height   size in pixels; svg   0 or 1
#   chart_title     the title line
#   rows        y lo hi plo phi class "name" "value" vx: a bar from lo to
#               hi at row y (1 is the bottom), the prediction's bar from plo
#               to phi (NaN: none), class 1 fused faster, 2 within 2%,
#               3 slower; the value text starts at vx
#   nrows       the number of rows; has_pred   1 when any prediction exists
#   bar         the share (0-1) of the full bar height drawn: a few rows
#               keep thin bars
#   classes     the classes the bars use, for the key (\"1 3\")
#   xlo, xhi    the speedup axis
#   margin_l, margin_r, margin_t, margin_b   the plot area's edges as
#               fractions of the canvas, sized to the names and numbers
#   style_names the three classes' names for the key
# The colours mean faster / even / slower, as the roofline's arrows do;
# none is a workload colour of the roofline charts.

faster = "#009e73"
even = "#8c8c8c"
slower = "#d55e00"
has_class(k) = strstrt(" ".classes." ", sprintf(" %d ", k)) > 0
class_rgb(k) = k == 1 ? 0x009e73 : k == 2 ? 0x8c8c8c : 0xd55e00

do for [fmt in (svg ? "png svg" : "png")] {
	reset
	if (fmt eq "png") {
		set terminal pngcairo size width,height font ",10" noenhanced
	} else {
		set terminal svg size width,height font ",10" noenhanced
	}
	set output out.".".fmt
	set lmargin at screen margin_l
	set rmargin at screen margin_r
	set tmargin at screen margin_t
	set bmargin at screen margin_b
	set label 1 chart_title at screen 0.5, screen 1 - 16.0 / height center noenhanced
	set logscale x 2
	set xrange [xlo:xhi]
	set yrange [0.4:nrows + 0.6]
	set format x "%g×"
	set xtics nomirror
	set ytics nomirror scale 0 font ",9"
	set xlabel "speedup of the fused variant (other variant's time / fused time; right of 1: fused is faster)"
	set grid xtics lc rgb "#e8e8e8"
	set border 1
	set key at screen 0.5, screen 1 - 28.0 / height center top horizontal Left reverse noenhanced samplen 1.5 width 1
	set arrow 1 from 1, graph 0 to 1, graph 1 nohead lc rgb "#333333" lw 1 front
	plot \
	  rows using (sqrt($2 * $3)):1:2:3:($1 - 0.04 * bar):($1 + 0.38 * bar):(class_rgb($6)):ytic(7) \
	    with boxxyerror fs solid 1 noborder lc rgb variable notitle, \
	  rows using (sqrt($4 * $5)):1:4:5:($1 - 0.40 * bar):($1 - 0.08 * bar) with boxxyerror \
	    fs solid 1 border lc rgb "#555555" fc rgb "#d9d9d9" notitle, \
	  rows using 9:($1 + 0.17 * bar):8 with labels left font ",8" tc rgb "#222222" notitle, \
	  for [k = 1:3] keyentry with boxes fs solid 1 noborder \
	    lc rgb word(faster." ".even." ".slower, k) \
	    title (has_class(k) ? word(style_names, k) : ""), \
	  keyentry with boxes fs solid 1 border lc rgb "#555555" fc rgb "#d9d9d9" \
	    title (has_pred ? "the byte model's prediction" : "")
	unset output
}
