## reports/compare.mk - (empty until its folder's work lands)
