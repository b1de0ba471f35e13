/* api.c - the public functions that belong to no engine (dogwood.h). */
#include "dogwood.h"
#include <stdlib.h>

const char *dw_version(void) { return DW_VERSION_STRING; }

void dw_free(void *p) { free(p); }
