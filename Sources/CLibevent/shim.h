#ifndef SERIALIZERD_CLIBEVENT_SHIM_H
#define SERIALIZERD_CLIBEVENT_SHIM_H
// event2/event-config.h defines _GNU_SOURCE. glibc's <features.h> must be seen first,
// or this module gets a different fd_set than SwiftGlibc and the build fails.
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/util.h>

// accept4(2) is declared only under _GNU_SOURCE, which this module must not define
// before glibc's headers (see above); the symbol is in every glibc.
#ifndef __USE_GNU
extern int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
#endif
#endif
