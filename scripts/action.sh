#!/usr/bin/env bash
# The composite action's body: annotations on the spec lines, SARIF, and markdown in the job summary.
set -uo pipefail
report="${RUNNER_TEMP:-/tmp}/gsg-report.md"
echo "markdown-file=$report" >> "${GITHUB_OUTPUT:-/dev/null}"
fleet=()
[ -n "${GSG_FLEET_FILE:-}" ] && fleet=(--fleet "$GSG_FLEET_FILE")

case "${GSG_COMMAND:-validate}" in
  validate)
    # one run writes every report: the annotations on stdout, SARIF and markdown as files
    reports=(--report "markdown=$report")
    [ -n "${GSG_SARIF:-}" ] && reports+=(--report "sarif=$GSG_SARIF")
    offline=()
    [ "${GSG_ACTION_OFFLINE:-true}" = true ] && offline=(--offline)
    gsg validate $GSG_SPECS "${fleet[@]}" "${offline[@]}" --fail-level "$GSG_FAIL_LEVEL" --output github "${reports[@]}"
    code=$?
    ;;
  plan)
    gsg plan $GSG_SPECS --output markdown --detailed-exitcode > "$report"
    code=$?
    ;;
  drift)
    gsg drift $GSG_SPECS --output markdown --detailed-exitcode > "$report"
    code=$?
    ;;
  *)
    echo "::error::unknown command '$GSG_COMMAND' (validate, plan or drift)"
    exit 1
    ;;
esac
[ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$report" >> "$GITHUB_STEP_SUMMARY"
echo "exit-code=$code" >> "${GITHUB_OUTPUT:-/dev/null}"
# plan/drift: 2 means "changes present", which is information, not failure
if [ "$code" = 2 ] && [ "${GSG_COMMAND}" != validate ]; then exit 0; fi
exit "$code"
