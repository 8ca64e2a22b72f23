# roofline.gp - one roofline chart (log-log: FLOP/byte vs FLOP/s) from the
# plain data files `fuseprof report` writes. Set these before `load`:
#   out         output stem: writes out.'.png' (and out.'.svg' when svg = 1)
#   width, height   size in pixels; svg   0 or 1
#   chart_title     the title line
#   points      x y colour marker "label" pt: one point per op (colour:
#               index into `workloads`; marker: index into `markers`; pt:
#               the gnuplot point type drawn for that marker)
#   arrows      x y dx dy colour: unfused point -> fused point
#   has_arrows  0 when the arrows file is empty (nothing to draw)
#   roofs       x1 y1 x2 y2 kind lx ly "label": a roof segment (kind 1:
#               bandwidth, 2: compute) and where its label goes
#   levels      '' or a file of blocks (one per op) joining its DRAM, L2
#               and L1 points: x y colour
#   workloads, markers   space-separated names for the key; the key shows
#               workloads wfrom to wto (their colours are their indices)
#   marker_pts  the point types of markers 1, 2, ... (the data's column 6)
#   labels      1: print each point's label beside it
#   xmin, xmax, ymin, ymax   axis ranges
# Restyle freely: `gnuplot plots.gp` in a report folder made with
# --keep-data redraws every chart from the kept data.

mtype(i) = int(word(marker_pts, (int(i) - 1) % words(marker_pts) + 1))

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
# Optional parts of the plot command, as macros: an empty one costs
# nothing, where a clause that draws nothing still reads every point.
level_lines = strlen(levels) > 0 ? \
	"levels using 1:2:3 with lines lw 0.5 lc variable notitle," : ""
arrow_lines = has_arrows ? \
	"arrows using 1:2:3:4 with vectors arrowstyle 1 notitle," : ""
point_labels = labels ? \
	"points using 1:2:5 with labels left offset 0.6,0 font ',7' notitle," : ""
set style arrow 1 head filled size screen 0.008,20 lw 1 lc rgb "#555555"

do for [fmt in (svg ? "png svg" : "png")] {
	if (fmt eq "png") {
		set terminal pngcairo size width,height font ",10" noenhanced
	} else {
		set terminal svg size width,height font ",10" noenhanced
	}
	set output out.".".fmt
	plot \
	  @level_lines \
	  @arrow_lines \
	  points using 1:2:6:3 with points ps 1.1 pt variable \
	    lc variable notitle, \
	  @point_labels \
	  roofs using 1:2:($3 - $1):($4 - $2):($5 == 1 ? 0x1f3a93 : 0xa02020) \
	    with vectors nohead lw 2 lc rgb variable notitle, \
	  roofs using ($5 == 1 ? $6 : NaN):7:8 with labels left offset 0.5,0.6 \
	    font ",9" tc rgb "#333333" notitle, \
	  roofs using ($5 == 2 ? $6 : NaN):7:8 with labels right offset 0,0.6 \
	    font ",9" tc rgb "#333333" notitle, \
	  for [i = wfrom:wto] NaN with points pt 7 lc i \
	    title word(workloads, i), \
	  for [j = 1:words(markers)] NaN with points pt mtype(j) lc rgb "black" \
	    title word(markers, j)
	unset output
}
