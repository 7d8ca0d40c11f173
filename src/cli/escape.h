/*
 * escape.h - escaping for the report formats of the CLI (escape.c).
 */
#ifndef ONNXRUN_CLI_ESCAPE_H
#define ONNXRUN_CLI_ESCAPE_H

#include <stdio.h>

void cli_write_xml(FILE *f, const char *s, int attr);
void cli_write_json_string(FILE *f, const char *s);
void cli_write_dot_text(FILE *f, const char *s);

#endif /* ONNXRUN_CLI_ESCAPE_H */
