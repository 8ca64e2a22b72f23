# roofline.gp - one roofline chart (log-log: FLOP/byte vs FLOP/s) from the
# plain data files `fuseprof report` writes. Set these before `load`:
#   out         output stem: writes out.'.png' (and out.'.svg' when svg = 1)
#   width, height   size in pixels; svg   0 or 1
#   chart_title     the title line
#   margin_l, margin_r, margin_t, margin_b   the plot area's edges as
#               fractions of the canvas: fixed, because the labels were
#               placed knowing where each point lands
#   points      x y rgb pt: one point per op (rgb: its workload's colour
#               as an integer; pt: the gnuplot point type of its variant:
#               filled fused, open unfused, crosses naive; in the chart by
#               level, the level's shape, filled when fused)
#   arrows      x y dx dy style: another variant's point -> the fused one,
#               already trimmed so the head stops short of the point;
#               style 1 fused faster, 2 within 2%, 3 fused slower; 4 from
#               the same op in the base run (report --base) to this run's
#   has_arrows  0 when the arrows file is empty (nothing to draw)
#   roofs       x1 y1 x2 y2 kind lx ly "label" just: a roof segment (kind 1:
#               bandwidth, 2: compute) and its label, which starts at
#               (lx, ly) when just is 0 and ends there when just is 1
#   roof_labels_left, roof_labels_right   how many labels have just 0, 1
#   levels      '' or a file of blocks (one per op) joining its DRAM, L2
#               and L1 points: x y rgb
#   labels      '' or a file of x y "n" ax ay bx by: a group's number
#               centred at (x, y) beside a point of the group, and a leader
#               line from (ax, ay) to (bx, by) when the number sits further
#               out (NaN when not)
#   keys        '' or a file of nx y "n" tx "text": under the chart, what
#               each number stands for (in pixels from the bottom left)
#   workloads, workload_rgbs   the workloads the chart draws and their
#               colours ("#rrggbb"), quoted words
#   markers, marker_pts   the markers the chart draws (quoted words) and
#               their point types
#   arrow_styles  the arrow styles the chart draws ("1 3"); arrow_names
#               the four styles' names
#   xmin, xmax, ymin, ymax   axis ranges
#   xtics_at, ytics_at   '' or the tics of a narrow axis (1-2-5 steps)
# Restyle freely: `gnuplot plots.gp` in a report folder made with
# --keep-data redraws every chart from the kept data.

# Optional parts of the plot command, as macros: an empty one costs
# nothing, where a clause that draws nothing still reads every point.
level_lines = strlen(levels) > 0 ? \
	"levels using 1:2:3 with lines lw 0.5 lc rgb variable notitle," : ""
arrow_lines = has_arrows ? \
	"arrows using 1:2:3:4:5 with vectors arrowstyle variable notitle," : ""
# A key entry for each arrow style drawn; an empty title makes none.
has_style(k) = strstrt(" ".arrow_styles." ", sprintf(" %d ", k)) > 0
# A labels clause whose every point is undefined crashes gnuplot 5.4
# (SIGSEGV): each justification is drawn only when some label has it.
roof_left = roof_labels_left > 0 ? \
	"roofs using ($9 == 0 ? $6 : NaN):7:8 with labels left font ',9' tc rgb '#333333' notitle," : ""
roof_right = roof_labels_right > 0 ? \
	"roofs using ($9 == 1 ? $6 : NaN):7:8 with labels right font ',9' tc rgb '#333333' notitle," : ""
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
	# Narrow axes get 1-2-5 tics, wide ones gnuplot's decades.
	if (words(xtics_at) > 0) {
		eval "set xtics (".xtics_at.")"
	}
	if (words(ytics_at) > 0) {
		eval "set ytics (".ytics_at.")"
	}
	set format x "%g"
	set format y "%.0s %cFLOP/s"
	set xlabel "arithmetic intensity (FLOP/byte)"
	set ylabel "attained performance"
	set title chart_title noenhanced
	set grid xtics ytics mxtics mytics lc rgb "#e8e8e8" lw 1
	set key outside right top vertical Left reverse noenhanced samplen 1.5 spacing 1.1
	set border 3
	set tics nomirror
	# Faster, even, slower: the colours fusion.png uses for the same
	# meaning; slower is dashed too, for readers who cannot tell them.
	set style arrow 1 head filled size screen 0.008,20 lw 1.4 lc rgb "#009e73"
	set style arrow 2 head filled size screen 0.008,20 lw 1 lc rgb "#8c8c8c"
	set style arrow 3 head filled size screen 0.008,20 lw 1.4 dt 2 lc rgb "#d55e00"
	# The base run's op to this run's: black and dotted, so it
	# reads apart from the fusion arrows and from every workload colour.
	set style arrow 4 head filled size screen 0.010,22 lw 1.5 dt 3 lc rgb "#000000"
	plot \
	  @level_lines \
	  points using 1:2:4:3 with points ps 1.1 pt variable \
	    lc rgb variable notitle, \
	  @arrow_lines \
	  @point_labels \
	  roofs using 1:2:($3 - $1):($4 - $2):($5 == 1 ? 0x1f3a93 : 0xa02020) \
	    with vectors nohead lw 2 lc rgb variable notitle, \
	  @roof_left \
	  @roof_right \
	  for [i = 1:words(workloads)] keyentry with points pt 7 \
	    lc rgb word(workload_rgbs, i) title word(workloads, i), \
	  for [k = 1:words(arrow_names)] keyentry with vectors arrowstyle k \
	    title (has_style(k) ? word(arrow_names, k) : ""), \
	  for [j = 1:words(markers)] keyentry with points \
	    pt int(word(marker_pts, j)) lc rgb "black" title word(markers, j)
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
