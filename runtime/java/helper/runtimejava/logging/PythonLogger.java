package runtimejava.logging;

import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

final class PythonLogger extends LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;

    PythonLogger(String name) {
        this.name = name;
    }

    private boolean enabled(int level) {
        return PythonLogs.level(name) <= level;
    }

    @Override
    public boolean isTraceEnabled() {
        return enabled(PythonLogs.TRACE);
    }

    @Override
    public boolean isDebugEnabled() {
        return enabled(PythonLogs.DEBUG);
    }

    @Override
    public boolean isInfoEnabled() {
        return enabled(PythonLogs.INFO);
    }

    @Override
    public boolean isWarnEnabled() {
        return enabled(PythonLogs.WARN);
    }

    @Override
    public boolean isErrorEnabled() {
        return enabled(PythonLogs.ERROR);
    }

    @Override
    protected String getFullyQualifiedCallerName() {
        return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(
            Level level, Marker marker, String pattern, Object[] arguments, Throwable error) {
        int number;
        switch (level) {
            case TRACE: number = PythonLogs.TRACE; break;
            case DEBUG: number = PythonLogs.DEBUG; break;
            case INFO: number = PythonLogs.INFO; break;
            case WARN: number = PythonLogs.WARN; break;
            default: number = PythonLogs.ERROR; break;
        }
        PythonLogs.log(name, number, MessageFormatter.basicArrayFormat(pattern, arguments), error);
    }
}
