# For the charts (plots/runs.gp), after plots/common.awk: one CSV's ceiling in GB/s and the name of
# its run in a chart's key, the GPU and that ceiling, a tab between them:
# "4246.3<TAB>H200, ceiling 4246.3 GB/s".
/^# gpu: / { gpu = gpu_name(substr($0, 8)) }
/^# ceiling: / { ceiling = ceiling_gbps(substr($0, 12)) }
END { printf "%.1f\t%s, ceiling %.1f GB/s\n", ceiling, gpu, ceiling }
