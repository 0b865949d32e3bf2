#include "file_attributes.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

int set_attributes(const char *p, int flags, bool on)
{
    const int fd = open(p, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    int now, e = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &now) != 0)
        e = errno;
    now = on ? now | flags : now & ~flags;
    if (!e && ioctl(fd, FS_IOC_SETFLAGS, &now) != 0)
        e = errno;
    close(fd);
    return e;
}
