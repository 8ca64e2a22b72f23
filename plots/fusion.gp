# fusion.gp - what fusion bought, as bars: per workload, dtype and shape,
# the time (µs) and DRAM bytes (MB) of each variant side by side. Reads the
# plain data files `fuseprof report` writes. Set these before `load`:
#   out         output stem: writes out.'.png' (and out.'.svg' when svg = 1)
#   width, height   size in pixels; svg   0 or 1
#   chart_title     the title line
#   bars        x time_us dram_mb variant: one bar pair per op (variant:
#               index into `variants`)
#   groups      x "label": the centre of each workload/dtype/shape group
#   variants    space-separated variant names for the key
#   show_tics   1: label each group under the axis
#   xmax        the last bar's x + 1

set style fill solid 0.85 noborder
set boxwidth 0.9
set logscale y
set xrange [-0.5:xmax]
set grid ytics lc rgb "#e8e8e8"
set border 3
set tics nomirror
set key outside right top vertical Left reverse noenhanced
set lmargin 12
set rmargin 18

do for [fmt in (svg ? "png svg" : "png")] {
	if (fmt eq "png") {
		set terminal pngcairo size width,height font ",10" noenhanced
	} else {
		set terminal svg size width,height font ",10" noenhanced
	}
	set output out.".".fmt
	set multiplot layout 2,1 title chart_title noenhanced
	set ylabel "time (µs)"
	set format x ""
	unset xtics
	set xtics scale 0
	set bmargin 1
	plot bars using 1:2:4 with boxes lc variable notitle, \
	  for [j = 1:words(variants)] NaN with boxes lc j title word(variants, j)
	set ylabel "DRAM bytes (MB)"
	set bmargin (show_tics ? 10 : 3)
	set format x "%g"
	if (show_tics) {
		set xtics rotate by -40 font ",8" scale 0
		plot bars using 1:3:4 with boxes lc variable notitle, \
		  groups using 1:(NaN):xtic(2) notitle
	} else {
		unset xtics
		plot bars using 1:3:4 with boxes lc variable notitle
	}
	unset multiplot
	unset output
}
