# roofline.gp - one roofline chart (log-log: FLOP/byte vs FLOP/s) from the
# plain data files `fuseprof report` writes. Set these before `load`:
#   out         output stem: writes out.'.png' (and out.'.svg' when svg = 1)
#   width, height   size in pixels; svg   0 or 1
#   chart_title     the title line
#   margin_l, margin_r, margin_t, margin_b   the plot area's edges as
#               fractions of the canvas: fixed, because the labels were
#               placed knowing where each point lands
#   points      x y colour marker pt: one point per op (colour: index into
#               `workloads`; marker: index into `markers`; pt: the gnuplot
#               point type drawn for that marker)
#   arrows      x y dx dy colour: unfused point -> fused point
#   has_arrows  0 when the arrows file is empty (nothing to draw)
#   roofs       x1 y1 x2 y2 kind lx ly "label" just: a roof segment (kind 1:
#               bandwidth, 2: compute) and its label, which starts at
#               (lx, ly) when just is 0 and ends there when just is 1
#   levels      '' or a file of blocks (one per op) joining its DRAM, L2
#               and L1 points: x y colour
#   labels      '' or a file of x y "n" ax ay bx by: a group's number
#               centred at (x, y) beside a point of the group, and a leader
#               line from (ax, ay) to (bx, by) when the number sits further
#               out (NaN when not)
#   keys        '' or a file of nx y "n" tx "text": under the chart, what
#               each number stands for (in pixels from the bottom left)
#   workloads, markers   space-separated names for the key; the key shows
#               workloads wfrom to wto (their colours are their indices)
#   marker_pts  the point types of markers 1, 2, ... (the data's column 5)
#   xmin, xmax, ymin, ymax   axis ranges
# Restyle freely: `gnuplot plots.gp` in a report folder made with
# --keep-data redraws every chart from the kept data.

mtype(i) = int(word(marker_pts, (int(i) - 1) % words(marker_pts) + 1))

# Optional parts of the plot command, as macros: an empty one costs
# nothing, where a clause that draws nothing still reads every point.
level_lines = strlen(levels) > 0 ? \
	"levels using 1:2:3 with lines lw 0.5 lc variable notitle," : ""
arrow_lines = has_arrows ? \
	"arrows using 1:2:3:4 with vectors arrowstyle 1 notitle," : ""
point_labels = strlen(labels) > 0 ? \
	"labels using 4:5:($6 - $4):($7 - $5) with vectors nohead lw 0.5 lc rgb '#777777' notitle, labels using 1:2:3 with labels center font ',8' tc rgb '#222222' notitle," : ""

do for [fmt in (svg ? "png svg" : "png")] {
	# Each picture starts from scratch: the key table below changes the
	# settings.
	reset
	if (fmt eq "png") {
		set terminal pngcairo size width,height font ",10" noenhanced
	} else {
		set terminal svg size width,height font ",10" noenhanced
	}
	set output out.".".fmt
	if (strlen(keys) > 0) {
		set multiplot
	}
	set lmargin at screen margin_l
	set rmargin at screen margin_r
	set tmargin at screen margin_t
	set bmargin at screen margin_b
	set logscale xy
	set xrange [xmin:xmax]
	set yrange [ymin:ymax]
	set format x "%g"
	set format y "%.0s %cFLOP/s"
	set xlabel "arithmetic intensity (FLOP/byte)"
	set ylabel "attained performance"
	set title chart_title noenhanced
	set grid xtics ytics mxtics mytics lc rgb "#e8e8e8" lw 1
	set key outside right top vertical Left reverse noenhanced samplen 1.5 spacing 1.1
	set border 3
	set tics nomirror
	set style arrow 1 head filled size screen 0.008,20 lw 1 lc rgb "#555555"
	plot \
	  @level_lines \
	  @arrow_lines \
	  points using 1:2:5:3 with points ps 1.1 pt variable \
	    lc variable notitle, \
	  @point_labels \
	  roofs using 1:2:($3 - $1):($4 - $2):($5 == 1 ? 0x1f3a93 : 0xa02020) \
	    with vectors nohead lw 2 lc rgb variable notitle, \
	  roofs using ($9 == 0 ? $6 : NaN):7:8 with labels left \
	    font ",9" tc rgb "#333333" notitle, \
	  roofs using ($9 == 1 ? $6 : NaN):7:8 with labels right \
	    font ",9" tc rgb "#333333" notitle, \
	  for [i = wfrom:wto] NaN with points pt 7 lc i \
	    title word(workloads, i), \
	  for [j = 1:words(markers)] NaN with points pt mtype(j) lc rgb "black" \
	    title word(markers, j)
	if (strlen(keys) > 0) {
		# The key to the numbers, on a frame the size of the canvas.
		unset logscale
		unset grid
		unset border
		unset tics
		unset title
		unset key
		unset xlabel
		unset ylabel
		set lmargin at screen 0
		set rmargin at screen 1
		set tmargin at screen 1
		set bmargin at screen 0
		set xrange [0:width]
		set yrange [0:height]
		plot keys using 1:2:3 with labels right font ",9" tc rgb "#222222" notitle, \
		  keys using 4:2:5 with labels left font ",9" tc rgb "#333333" notitle
		unset multiplot
	}
	unset output
}
