"""Connect data in Java's forms, shared by the converters and the transforms (which never import each other):
the logical types' schemas, Java's float and double text, SimpleDateFormat with GregorianCalendar's dates, and
Kafka's `Values.parseString`."""
