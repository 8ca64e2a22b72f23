## probes/local.mk - (empty until its folder's work lands)
